// send/recv peer patterns: who each rank sends to and receives from in one launch of the
// `sendrecv` family. Exposed so the runner's fault injection (slow-pair) slows exactly the
// pairs that exchange data. Pure (no MPI).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collbench/coll/collective.hpp"

namespace collbench::coll {

// Parameter `pairing` of sendrecv:
//   ring         every rank sends to rank+1 and receives from rank-1 (nccl-tests; the default)
//   round-robin  round R of the circle method over the communicator's ranks: n/2 disjoint
//                pairs exchange both ways (parameter `round`, 0 <= R < n-1; a rank without a
//                partner in that round exchanges with itself)
//   rail         round R of the circle method over the domains: every rank exchanges with the
//                rank of the same index inside the partner domain (one pair per rail, all rails
//                at once); scope global only
const std::vector<std::string>& sendrecv_pairings();

struct SendRecvPeers {
  int send_to = 0;  // communicator ranks
  int recv_from = 0;
};

// The peers of ctx.rank for the case's parameters (ctx.params may be null: ring).
SendRecvPeers sendrecv_peers(const CaseContext& ctx);

// InputError naming the bad key or value (pairing, round).
void check_sendrecv_params(const std::map<std::string, std::string>& params);

}  // namespace collbench::coll
