// The table of facts per collective (core/collective_facts.hpp): the results schema's
// `collective` enum lists exactly its names, every registered family takes its facts from it,
// and the lookups the model, the importer, the NCCL host logic and records use agree with it.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/names.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/record/nccltests_import.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/nccltests_layout_writer.hpp"
#include "collbench/step/overlap_source.hpp"

using namespace collbench;

namespace {

std::vector<std::string> schema_collective_enum() {
  const std::string path = std::string(COLLBENCH_SOURCE_DIR) + "/results/schema/collbench.result-1.schema.json";
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  const auto schema = nlohmann::json::parse(in);
  return schema.at("$defs").at("case").at("properties").at("collective").at("enum").get<std::vector<std::string>>();
}

}  // namespace

TEST(CollectiveFacts, SchemaEnumEqualsTheTable) {
  std::vector<std::string> table;
  for (const auto& f : all_collective_facts()) table.emplace_back(f.name);
  EXPECT_EQ(schema_collective_enum(), table);  // same names, same order
}

// The schema's algo_requested enum is every --algo value (collnet-direct, collnet-chain and
// nvls-collnet were missing, so their records failed validation).
TEST(CollectiveFacts, SchemaAlgoEnumEqualsTheAlgorithmNames) {
  const std::string path = std::string(COLLBENCH_SOURCE_DIR) + "/results/schema/collbench.result-1.schema.json";
  std::ifstream in(path);
  const auto schema = nlohmann::json::parse(in);
  const auto algos =
      schema.at("$defs").at("case").at("properties").at("algo_requested").at("enum").get<std::vector<std::string>>();
  EXPECT_EQ(algos, algorithm_names());
}

TEST(CollectiveFacts, EveryIdHasOneRowAndNamesRoundTrip) {
  std::set<CollectiveId> ids;
  std::set<std::string_view> names;
  for (const auto& f : all_collective_facts()) {
    EXPECT_TRUE(ids.insert(f.id).second) << f.name;
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_EQ(&collective_facts(f.id), &f);
    EXPECT_EQ(collective_id(f.name), f.id);
    EXPECT_EQ(to_string(f.id), f.name);
  }
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(CollectiveId::scatter) + 1);
  EXPECT_EQ(find_collective_facts("allreduse"), nullptr);
  EXPECT_FALSE(collective_id("allreduse"));
}

TEST(CollectiveFacts, RegisteredFamiliesAreTheRunnableRows) {
  std::vector<std::string> registered = coll::collective_names();
  EXPECT_EQ(registered, collective_names_where(&CollectiveFacts::runs));
  for (const auto& c : coll::collective_registry()) {
    EXPECT_EQ(&c->facts(), find_collective_facts(c->name())) << c->name();
    EXPECT_EQ(c->busbw_factor(8), busbw_factor(c->id(), 8)) << c->name();
  }
}

TEST(CollectiveFacts, BusbwRules) {
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveId::allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveId::allreduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveId::reducescatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveId::moe_dispatch, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveId::sendrecv, 1024), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveId::reduce, 1024), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveId::ep_dp_concurrent, 8), 0.0);
  // The model and the nccl-tests importer read the same rows.
  for (const auto& name : model::modelled_collectives()) {
    const auto id = *collective_id(name);
    for (const int n : {1, 2, 8, 72, 1024}) {
      EXPECT_EQ(model::busbw_factor(name, n), busbw_factor(id, n)) << name << " " << n;
      EXPECT_EQ(record::nccl_tests_busbw_factor(name, n), busbw_factor(id, n)) << name << " " << n;
    }
  }
}

TEST(CollectiveFacts, WhatKnowsEachCollective) {
  EXPECT_EQ(model::modelled_collectives(),
            (std::vector<std::string>{"allreduce", "reducescatter", "allgather", "alltoall", "alltoallv", "broadcast",
                                      "sendrecv", "reduce", "gather", "scatter"}));
  EXPECT_EQ(collective_names_where(&CollectiveFacts::nccl_tests),
            (std::vector<std::string>{"allreduce", "reducescatter", "allgather", "alltoall", "alltoallv", "broadcast",
                                      "sendrecv", "reduce", "gather", "scatter"}));
  EXPECT_EQ(collective_names_where(&CollectiveFacts::reduces),
            (std::vector<std::string>{"allreduce", "reducescatter", "reduce", "ep-dp-concurrent"}));
  EXPECT_EQ(collective_facts(CollectiveId::allgather).buffers, BufferRule::full_and_chunk);
  EXPECT_EQ(collective_facts(CollectiveId::reducescatter).buffers, BufferRule::full_and_chunk);
  EXPECT_EQ(collective_facts(CollectiveId::alltoall).buffers, BufferRule::full_each);
}

TEST(CollectiveFacts, NcclOperations) {
  using backend::nccl::op_of_collective;
  EXPECT_EQ(op_of_collective("allreduce"), NcclOp::allreduce);
  EXPECT_EQ(op_of_collective("moe-dispatch"), NcclOp::alltoallv);
  EXPECT_EQ(op_of_collective("moe-roundtrip"), NcclOp::alltoallv);
  EXPECT_EQ(op_of_collective("ep-dp-concurrent"), NcclOp::none);
  EXPECT_EQ(op_of_collective("reduce"), NcclOp::reduce);
  EXPECT_EQ(op_of_collective("gather"), NcclOp::gather);
  // A collective that is one operation is named as that operation (MoE's exchanges are alltoallv).
  for (const auto& f : all_collective_facts()) {
    if (f.nccl_op != NcclOp::none && !f.moe) {
      EXPECT_EQ(to_string(f.nccl_op), f.name);
    }
  }
}

// comm_ranks (the communicator busbw uses) is a typed field, written where the untyped one was.
TEST(CollectiveFacts, RecordCommRanksIsTyped) {
  const nlohmann::json j = nlohmann::json::parse(
      R"({"kind":"case","schema":"collbench.result/1","run_id":"r","case_key":"k","collective":"allreduce",
          "redop":"sum","dtype":"float32","backend":"mpi","algo_requested":"auto","algo_used":null,
          "scope":"domain","in_place":false,"timing":"isolated","buffers":"host","graph":0,"bytes":8,"count":2,
          "bytes_per_rank_send":8,"bytes_per_rank_recv":8,"bytes_max_rank":null,"bytes_logical_total":null,
          "num_ranks":8,"comm_ranks":4,"domain_sizes":[4,4],"num_domains":2,"iterations":1,"warmup":0,
          "time_us":null,"samples_us":[],"samples_dropped":0,"per_rank":null,"stop_reason":"max_iters",
          "algbw_gbps":1.0,"busbw_gbps":1.5,"checked":true,"wrong":{"total":0,"by_rank":{}},"model":null,
          "workload":null,"overlap":null,"status":"ok","reason":null,"fault":null,"progress":"spin"})");
  const record::CaseRecord r = record::case_from_json(j);
  EXPECT_EQ(r.comm_ranks, 4);
  EXPECT_EQ(r.num_ranks, 8);
  EXPECT_FALSE(r.extra.contains("comm_ranks"));
  EXPECT_EQ(record::to_json(r).dump(), j.dump());  // same keys, same place, same text
  record::CaseRecord none = r;
  none.comm_ranks.reset();
  EXPECT_FALSE(record::to_json(none).contains("comm_ranks"));
  // Written the old way (an extra key), the output is the same.
  none.extra["comm_ranks"] = 4;
  EXPECT_EQ(record::to_json(none).dump(), j.dump());
}

// What the other layers used to hold as lists of their own now comes from the rows: the step's
// overlap sources in their order of preference, nccl-tests' program names, the rooted set, the MoE
// families, the gate's floor keys and the model's plan per collective.
TEST(CollectiveFacts, EveryLayerReadsTheRows) {
  using V = std::vector<std::string>;
  EXPECT_EQ(step::overlap_collectives("ep"),
            (V{"moe-roundtrip", "moe-dispatch", "moe-combine", "alltoall", "alltoallv"}));
  EXPECT_EQ(step::overlap_collectives("tp"), (V{"allgather", "reducescatter", "allreduce"}));
  EXPECT_EQ(step::overlap_collectives("dp"), (V{"reducescatter", "allgather", "allreduce"}));
  EXPECT_EQ(step::overlap_collectives("pp"), (V{"sendrecv"}));
  EXPECT_TRUE(step::overlap_collectives("cp").empty());
  EXPECT_EQ(report::nccltests_program("allreduce"), "all_reduce_perf");
  EXPECT_EQ(report::nccltests_program("reduce"), "reduce_perf");
  EXPECT_EQ(report::nccltests_program("moe-dispatch"), "collbench_moe-dispatch");
  EXPECT_TRUE(record::rooted_collective("broadcast"));
  EXPECT_TRUE(record::rooted_collective("reduce"));
  EXPECT_FALSE(record::rooted_collective("allreduce"));
  EXPECT_FALSE(record::rooted_collective("no-such"));
  EXPECT_TRUE(is_moe_collective("moe-combine"));
  EXPECT_FALSE(is_moe_collective("alltoallv"));
  EXPECT_FALSE(is_moe_collective("moe-"));
  EXPECT_EQ(collective_facts(CollectiveId::broadcast).model, ModelPlan::rooted_pipeline);
  EXPECT_EQ(collective_facts(CollectiveId::sendrecv).model, ModelPlan::point_to_point);
  EXPECT_FALSE(collective_facts(CollectiveId::moe_dispatch).modelled);
  EXPECT_EQ(to_string(NcclOp::reducescatter), "reducescatter");
}
