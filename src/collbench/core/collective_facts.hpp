// One table of facts per collective (docs/interfaces.md section 1): the name records and case
// keys carry, what `bytes` counts, the busbw factor, the buffers a case needs, the library
// operation it runs, whether it reduces, and what knows it (the collective registry, the model,
// nccl-tests). coll, model, plan, record, the NCCL host logic and the CLI look facts up here
// instead of comparing names; the `collective` enum of the results schema lists exactly these
// names (tests/unit/test_collective_facts.cpp checks it).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

enum class CollectiveId : std::uint8_t {
  allreduce,
  reducescatter,
  allgather,
  alltoall,
  alltoallv,
  broadcast,
  sendrecv,
  moe_dispatch,
  moe_combine,
  moe_roundtrip,
  ep_dp_concurrent,
  reduce,  // only in records imported from nccl-tests logs; collbench does not run it
};

// busbw = algbw x factor(n), n = the communicator's rank count (nccl-tests conventions,
// docs/hardware-context.md section 3).
enum class BusbwRule : std::uint8_t {
  two_n_minus_1_over_n,  // all-reduce: 2(n-1)/n
  n_minus_1_over_n,      // reduce-scatter, all-gather, all-to-all(v): (n-1)/n
  one,                   // broadcast, reduce, sendrecv
  none,                  // 0: no single bus bandwidth (ep-dp-concurrent is judged on time)
};

// The buffers a case of `bytes` S needs, for estimates before the shape is known.
enum class BufferRule : std::uint8_t {
  full_each,       // send and receive buffers of up to S each (one of S in place)
  full_and_chunk,  // one buffer of S, the other S/n (reduce-scatter's output, all-gather's input)
};

// The operation a collective runs on one communicator, as NCCL names its functions (MoE
// dispatch/combine are all-to-all-v); none for families made of several operations at once.
enum class NcclOp : std::uint8_t {
  none,
  allreduce,
  reducescatter,
  allgather,
  broadcast,
  alltoall,
  alltoallv,
  sendrecv
};

std::string_view to_string(NcclOp op);

struct CollectiveFacts {
  CollectiveId id;
  std::string_view name;              // in records, case keys and on the command line
  std::string_view bytes_convention;  // what `bytes` means (run --list, docs)
  BusbwRule busbw;
  BufferRule buffers;
  NcclOp nccl_op;
  bool reduces;     // takes a reduction (-o/--redop)
  bool in_place;    // can run in place
  bool runs;        // collbench runs it (coll/registry.cpp); false: only imported records carry it
  bool modelled;    // modelled per case (model::model_case); MoE is bounded from its traffic matrix
  bool nccl_tests;  // nccl-tests has it, so its logs import into records of this collective
};

// Every collective, in the order of the results schema's enum.
std::span<const CollectiveFacts> all_collective_facts();

const CollectiveFacts& collective_facts(CollectiveId id);
// nullptr for a name no collective has.
const CollectiveFacts* find_collective_facts(std::string_view name);
std::optional<CollectiveId> collective_id(std::string_view name);
std::string_view to_string(CollectiveId id);

double busbw_factor(BusbwRule rule, int num_ranks);
inline double busbw_factor(CollectiveId id, int num_ranks) {
  return busbw_factor(collective_facts(id).busbw, num_ranks);
}

// The names of the collectives with a fact set (e.g. &CollectiveFacts::modelled), in table order.
std::vector<std::string> collective_names_where(bool CollectiveFacts::*fact);

}  // namespace collbench
