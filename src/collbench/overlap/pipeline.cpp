// Pipeline schedule (pipeline.hpp).
#include "collbench/overlap/pipeline.hpp"

#include <algorithm>
#include <stdexcept>

namespace collbench::overlap {

std::vector<Slot> pipeline_schedule(int chunks, int stages) {
  if (chunks < 1) throw std::invalid_argument("a pipeline needs at least one chunk");
  if (stages != 1 && stages != 2) throw std::invalid_argument("a pipeline has 1 or 2 communication stages");
  const int num_slots = chunks + stages;  // fill (1 slot) + C - 1 overlapped + drain (stages - 1)
  std::vector<Slot> slots(static_cast<std::size_t>(num_slots));
  for (int s = 0; s < num_slots; ++s) {
    Slot& slot = slots[static_cast<std::size_t>(s)];
    if (s >= 1 && s - 1 < chunks) slot.compute_chunk = s - 1;
    if (stages == 2 && s - 2 >= 0 && s - 2 < chunks) slot.comm.push_back({s - 2, 1});
    if (s < chunks) slot.comm.push_back({s, 0});
  }
  return slots;
}

double schedule_time_us(const std::vector<Slot>& schedule, const ChunkTimes& times) {
  double total = 0.0;
  for (const auto& slot : schedule) {
    double comm = 0.0;
    for (const auto& op : slot.comm) {
      if (op.stage < 0 || static_cast<std::size_t>(op.stage) >= times.stage_us.size()) {
        throw std::invalid_argument("schedule stage without a time");
      }
      comm += times.stage_us[static_cast<std::size_t>(op.stage)];
    }
    total += std::max(comm, slot.compute_chunk >= 0 ? times.compute_us : 0.0);
  }
  return total;
}

double ideal_step_us(double total_comm_us, double total_compute_us) {
  return std::max(total_comm_us, total_compute_us);
}

}  // namespace collbench::overlap
