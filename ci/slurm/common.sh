#!/usr/bin/env bash
# Shared by the ci/slurm/*.sbatch templates (docs/launching.md). Source it, or run
#   ci/slurm/common.sh hostfile TASKS_PER_NODE NODES_PER_RACK   # prints a SLURM_HOSTFILE path
# Settings (environment):
#   COLLBENCH          the collbench binary (default: collbench on PATH, else build/src/collbench)
#   COLLBENCH_RESULTS  the results folder of this job (default results/slurm-$SLURM_JOB_ID)
#   COLLBENCH_MPI_FLAG srun's PMI plugin (default --mpi=pmix; pmi2 for MPICH/MVAPICH built for it)
#   COLLBENCH_RACK_OF  a command printing the rack key of a node name given as $1 (default: the
#                      name up to its last '-', r01-n07 -> r01)
set -euo pipefail

COLLBENCH=${COLLBENCH:-$(command -v collbench || echo build/src/collbench)}
COLLBENCH_RESULTS=${COLLBENCH_RESULTS:-results/slurm-${SLURM_JOB_ID:-local}}
COLLBENCH_MPI_FLAG=${COLLBENCH_MPI_FLAG:---mpi=pmix}

rack_of() {
  if [[ -n ${COLLBENCH_RACK_OF:-} ]]; then
    ${COLLBENCH_RACK_OF} "$1"
  else
    echo "${1%-*}"
  fi
}

# A SLURM_HOSTFILE (one line per task) with the allocation's nodes grouped by rack, racks in
# name order, NODES_PER_RACK nodes from each rack (racks with fewer nodes are dropped with a
# warning: they would make an uneven domain), TASKS_PER_NODE lines per node: rack-major ranks.
make_hostfile() {
  local tasks_per_node=$1 nodes_per_rack=$2
  local out=${COLLBENCH_RESULTS}/hostfile.${SLURM_JOB_ID:-local}
  mkdir -p "$COLLBENCH_RESULTS"
  : > "$out"
  declare -A per_rack=()
  local nodes
  nodes=$(scontrol show hostnames "${SLURM_JOB_NODELIST:?not inside a Slurm allocation}")
  local rack node
  for node in $nodes; do
    rack=$(rack_of "$node")
    per_rack[$rack]+="$node "
  done
  for rack in $(printf '%s\n' "${!per_rack[@]}" | sort); do
    read -r -a members <<< "${per_rack[$rack]}"
    if ((${#members[@]} < nodes_per_rack)); then
      echo "collbench slurm: rack $rack has ${#members[@]} node(s) < $nodes_per_rack; left out" >&2
      continue
    fi
    for node in "${members[@]:0:nodes_per_rack}"; do
      for ((t = 0; t < tasks_per_node; t++)); do echo "$node" >> "$out"; done
    done
  done
  echo "$out"
}

# Runs collbench on the first NTASKS lines of the host file, rack-major.
#   cb_srun NTASKS HOSTFILE collbench-args...
cb_srun() {
  local ntasks=$1 hostfile=$2
  shift 2
  local sub=${hostfile}.${ntasks}
  head -n "$ntasks" "$hostfile" > "$sub"
  SLURM_HOSTFILE=$sub srun --distribution=arbitrary -n "$ntasks" "$COLLBENCH_MPI_FLAG" --cpu-bind=none \
    "$COLLBENCH" "$@"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  case ${1:-} in
    hostfile) make_hostfile "${2:?tasks per node}" "${3:?nodes per rack}" ;;
    *) echo "usage: $0 hostfile TASKS_PER_NODE NODES_PER_RACK" >&2; exit 2 ;;
  esac
fi
