// The analytic model's formulas (alpha-beta; docs/model.md derives each one): bytes each rank
// must move over each link class, bandwidth bounds and latency step counts, per collective and
// algorithm. Plain constexpr arithmetic on doubles, no I/O, no profile types, so every formula
// is testable against numbers computed by hand.
//
// Notation: S = bytes in the nccl-tests convention (docs/hardware-context.md section 3); n = ranks in the
// communicator; m = ranks in one scale-up domain; R = number of domains; B = bandwidth of one
// link class per GPU and per direction (bytes/s). "Wire bytes" are what the busiest rank sends
// (= receives) over one link class, per direction; time >= wire bytes / B on every link.
#pragma once

#include <algorithm>
#include <cstdint>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/in_switch.hpp"

namespace collbench::model {

// ---- busbw factors: core/collective_facts.hpp (busbw_factor, one rule per collective) ---------

// ---- ring ----------------------------------------------------------------------------------

// Ring all-reduce = ring reduce-scatter + ring all-gather. Each of the 2(n-1) steps sends one
// chunk of S/n to the next rank, so every rank sends (and receives) 2(n-1)/n S. With one link
// class of rate B: T = 2(n-1)/n S/B, hence busbw = S/T x 2(n-1)/n = B: the ring busbw bound is
// the per-direction link rate, independent of n.
constexpr double ring_allreduce_wire_bytes(double bytes, int n) {
  return 2.0 * (n - 1) / n * bytes;
}

// Ring reduce-scatter or all-gather: half of the above, (n-1) steps of S/n: (n-1)/n S.
constexpr double ring_gather_scatter_wire_bytes(double bytes, int n) {
  return (n - 1.0) / n * bytes;
}

// Across R domains a ring enters and leaves each domain once per channel; with one channel per
// NIC the ring traffic that crosses a domain boundary, 2(n-1)/n S for all-reduce, is spread
// over that domain's m NICs. The smallest domain has the fewest NICs, so it sets the network
// term: ring network bytes per NIC = ring wire bytes / m_min.
constexpr double per_nic_share(double domain_bytes, int nics_in_domain) {
  return domain_bytes / nics_in_domain;
}

// Latency of a ring all-reduce: 2(n-1) steps, of which 2(R-1) cross the network and the rest
// stay inside a domain (the split NCCL's tuning model uses too).
constexpr double ring_allreduce_latency_s(int n, int num_domains, double hop_up_s, double hop_out_s) {
  return 2.0 * (n - num_domains) * hop_up_s + 2.0 * (num_domains - 1) * hop_out_s;
}

// Ring reduce-scatter / all-gather / broadcast pipeline: (n-1) steps, (R-1) across the network.
constexpr double ring_latency_s(int n, int num_domains, double hop_up_s, double hop_out_s) {
  return (n - num_domains) * hop_up_s + (num_domains - 1.0) * hop_out_s;
}

// ---- tree ----------------------------------------------------------------------------------

// NCCL's double binary tree splits S over two trees; in each, a rank with k children and
// p (0 or 1) parents receives k S/2 and sends p S/2 while reducing, then the reverse while
// broadcasting: (k+p) S/2 per direction. The second tree mirrors (n even) or shifts (n odd)
// the first so that inner ranks of one are leaves of the other; the busiest rank has degree 3
// in one tree and 1 in the other: 4 x S/2 = 2S. Small trees are lighter: n = 2 gives each rank
// degree 1 in both trees (S); n = 3 gives at most degree 2 + 1 (1.5 S).
constexpr double double_binary_tree_wire_factor(int n) {
  if (n <= 1) return 0.0;
  if (n == 2) return 1.0;
  if (n == 3) return 1.5;
  return 2.0;
}

// Tree all-reduce (pipelined): wire bytes of the busiest rank; T -> 2S/B for large n, so its
// busbw bound is (n-1)/n B, below the ring's B, and algbw <= B/2.
constexpr double tree_allreduce_wire_bytes(double bytes, int n) {
  return double_binary_tree_wire_factor(n) * bytes;
}

// ceil(log2 x) for x >= 1: the depth of a binary tree over x members.
constexpr int ceil_log2(int x) {
  int depth = 0;
  for (long long reach = 1; reach < x; reach *= 2) ++depth;
  return depth;
}

// Tree all-reduce latency: up the tree and back down, 2 x depth, with the depth split into the
// in-domain part (log2 m) and the across-domain part (log2 R); one domain gives 2 ceil(log2 n).
constexpr double tree_allreduce_latency_s(int ranks_per_domain, int num_domains, double hop_up_s, double hop_out_s) {
  return 2.0 * (ceil_log2(ranks_per_domain) * hop_up_s + ceil_log2(num_domains) * hop_out_s);
}

// ---- NVLink SHARP (in-switch reduction, one domain of m GPUs) ---------------------------------

// Hardware bound: whatever the algorithm, every GPU must push its S bytes into the switch and
// pull the S-byte result out, so T >= S/B_up: algbw <= B_up, busbw <= 2(m-1)/m B_up. This is
// above the ring's B_up, which is why busbw under NVLS can exceed the link rate.
constexpr double in_switch_allreduce_wire_bytes(double bytes) {
  return bytes;
}
constexpr double in_switch_allreduce_busbw_bound(int m, double link_bytes_per_s) {
  return collbench::busbw_factor(BusbwRule::two_n_minus_1_over_n, m) * link_bytes_per_s;
}

// NCCL's NVLS (and collbench's cb-multimem) all-reduce: each GPU owns S/m of the buffer. It
// multimem.ld_reduce's its chunk (the switch reads that chunk from all m GPUs: every GPU sends
// S/m for each of the m chunks = S, and receives its reduced S/m), then multimem.st's the
// result (sends S/m, the switch multicasts: every GPU receives m x S/m = S). Per direction:
// S + S/m = (1 + 1/m) S (core/in_switch.hpp), so T = (1 + 1/m) S/B_up and busbw <= 2(m-1)/m /
// (1 + 1/m) B_up = 2(m-1)/(m+1) B_up.
using collbench::nvls_allreduce_wire_bytes;
constexpr double nvls_allreduce_busbw_bound(int m, double link_bytes_per_s) {
  return 2.0 * (m - 1) / (m + 1) * link_bytes_per_s;
}

// NVLS reduce-scatter (ld_reduce only: send S, receive S/m) or all-gather (st only: send S/m,
// receive S): the busy direction carries S, T = S/B_up and busbw <= (m-1)/m B_up, the ring's
// figure. No bandwidth gain; NVLS saves latency and SMs here.
using collbench::nvls_gather_scatter_wire_bytes;

// ---- across domains -------------------------------------------------------------------------

// Hierarchical all-reduce, network phase: after a reduce-scatter inside the domain each GPU
// holds S/m and all-reduces it with its peers in the other R-1 domains over its own NIC (ring
// over R): 2(R-1)/R x S/m bytes per NIC.
constexpr double hierarchical_allreduce_network_bytes(double bytes, int m, int num_domains) {
  return 2.0 * (num_domains - 1) / num_domains * bytes / m;
}

// In-network all-reduce (InfiniBand SHARP through NCCL CollNet, or an Ethernet equivalent):
// after a reduce-scatter inside the domain each GPU holds the domain's partial sum of one S/m
// chunk; it sends that chunk once through its NIC, the switches reduce the R domains' chunks and
// send the result back once, and an all-gather inside the domain spreads it. Per NIC and
// direction S/m whatever R is: half the ring's 2(n-1)/n x S/m, and no (R-1)/R growth.
constexpr double in_network_allreduce_nic_bytes(double bytes, int m) {
  return bytes / m;
}

// Hierarchical reduce-scatter / all-gather, network phase: (R-1)/R x S/m per NIC.
constexpr double hierarchical_gather_scatter_network_bytes(double bytes, int m, int num_domains) {
  return (num_domains - 1.0) / num_domains * bytes / m;
}

// Pipelined hierarchical all-reduce: the in-domain and network phases stream concurrently over
// different links, so the slower link sets the time and the network caps busbw at about
// 2(n-1)/n x m B_out R / (2(R-1)) -> m B_out R/(R-1) for large n.
constexpr double hierarchical_network_busbw_bound(int n, int m, int num_domains, double nic_bytes_per_s) {
  return num_domains > 1 ? collbench::busbw_factor(BusbwRule::two_n_minus_1_over_n, n) * m * nic_bytes_per_s *
                               num_domains / (2.0 * (num_domains - 1))
                         : 0.0;
}

// ---- all-to-all -----------------------------------------------------------------------------

// A rank in a domain of m_r ranks sends S/n to each of the n ranks: (n - m_r)/n of S leaves the
// domain over its NIC(s), (m_r - 1)/n of S stays on NVLink, and S/n is a local copy.
constexpr double alltoall_off_domain_fraction(int n, int m_r) {
  return static_cast<double>(n - m_r) / n;
}
constexpr double alltoall_in_domain_fraction(int n, int m_r) {
  return (m_r - 1.0) / n;
}

// The bound follows the worst rank: T >= max_r max(f_r S/B_out, (m_r-1)/n S/B_up); with the
// network term dominating, algbw = S/T <= B_out / max_r f_r.
constexpr double alltoall_algbw_bound(double out_bytes_per_s, double worst_off_domain_fraction) {
  return worst_off_domain_fraction > 0.0 ? out_bytes_per_s / worst_off_domain_fraction : 0.0;
}

// All-to-all inside one domain of m: (m-1)/m S over NVLink, busbw <= B_up.
constexpr double alltoall_in_domain_wire_bytes(double bytes, int m) {
  return (m - 1.0) / m * bytes;
}

// ---- helpers ---------------------------------------------------------------------------------

// Time for `wire_bytes` at `bytes_per_s` (0 when nothing moves).
constexpr double transfer_time_s(double wire_bytes, double bytes_per_s) {
  return wire_bytes > 0.0 ? wire_bytes / bytes_per_s : 0.0;
}

// Greatest common divisor of the domain sizes: NCCL builds one NVLS team per group of this many
// GPUs, so 72,72,72,40 shrinks the in-switch team to 8.
constexpr int gcd_int(int a, int b) {
  while (b != 0) {
    const int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

}  // namespace collbench::model
