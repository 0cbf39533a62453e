#!/usr/bin/env bash
# Shared by the ci/slurm/*.sbatch templates (docs/launching.md). Source it, or run
#   ci/slurm/common.sh hostfile TASKS_PER_NODE NODES_PER_RACK   # prints a SLURM_HOSTFILE path
#   ci/slurm/common.sh mpi-flag                                 # prints srun's --mpi=... for $COLLBENCH
#   ci/slurm/common.sh node-fabric-check                        # this node's GPUs joined the NVLink fabric
# Settings (environment):
#   COLLBENCH               the collbench binary (default: collbench on PATH, else build/src/collbench)
#   COLLBENCH_RESULTS       the results folder of this job (default results/slurm-$SLURM_JOB_ID)
#   COLLBENCH_MPI_FLAG      srun's PMI plugin; default: chosen from the MPI library collbench was
#                           built with (Open MPI -> --mpi=pmix, MPICH/MVAPICH/Intel MPI -> --mpi=pmi2)
#   COLLBENCH_RACK_OF       a command printing the rack key of a node name given as $1 (default: the
#                           name up to its last '-', r01-n07 -> r01; a name without '-' is an error)
#   COLLBENCH_PARTIAL_RACKS what to do with nodes that do not fill a rack of NODES_PER_RACK (or are
#                           beyond it): fail (default, exit 2 naming them) or drop (leave them out,
#                           naming them on stderr)
#   COLLBENCH_FABRIC_CHECK  0 skips the IMEX and fabric-manager check of the GB200/GB300 templates
set -euo pipefail
shopt -s inherit_errexit  # a failure inside $(...) stops the script too

COLLBENCH=${COLLBENCH:-$(command -v collbench || echo build/src/collbench)}
COLLBENCH_RESULTS=${COLLBENCH_RESULTS:-results/slurm-${SLURM_JOB_ID:-local}}

cb_fail() {
  echo "collbench slurm: error: $*" >&2
  exit 2
}

rack_of() {
  if [[ -n ${COLLBENCH_RACK_OF:-} ]]; then
    ${COLLBENCH_RACK_OF} "$1"
  elif [[ $1 == *-* && ${1%-*} != "" ]]; then
    echo "${1%-*}"
  else
    cb_fail "node '$1' has no '-' in its name, so its rack is unknown (the default rack key is the name" \
      "up to its last '-'); set COLLBENCH_RACK_OF to a command that prints the rack of the node named by" \
      "its first argument"
  fi
}

# Groups node names (one per line on stdin) by rack: prints "RACK NODE..." lines, racks in natural
# order (r2 before r10), nodes in natural order within a rack.
racks_of_nodes() {
  declare -A per_rack=()
  local node rack
  while read -r node; do
    [[ -n $node ]] || continue
    rack=$(rack_of "$node")
    per_rack[$rack]+="$node "
  done
  ((${#per_rack[@]} > 0)) || cb_fail "the allocation has no nodes"
  while read -r rack; do
    # shellcheck disable=SC2086 # word splitting of the node list is intended
    echo "$rack $(printf '%s\n' ${per_rack[$rack]} | sort -V | tr '\n' ' ' | sed 's/ $//')"
  done < <(printf '%s\n' "${!per_rack[@]}" | sort -V)
}

# The nodes used, rack-major, from "RACK NODE..." lines: NODES_PER_RACK nodes of each rack. Nodes
# that do not fill a rack, or are beyond NODES_PER_RACK in one, are an error (exit 2) unless
# COLLBENCH_PARTIAL_RACKS=drop, which leaves them out and names them on stderr.
select_nodes() {
  local nodes_per_rack=$1 policy=${COLLBENCH_PARTIAL_RACKS:-fail}
  [[ $policy == fail || $policy == drop ]] ||
    cb_fail "COLLBENCH_PARTIAL_RACKS='$policy'; accepted: fail, drop"
  [[ $nodes_per_rack =~ ^[1-9][0-9]*$ ]] || cb_fail "NODES_PER_RACK '$nodes_per_rack' is not a positive integer"
  local rack line members_text what unused=() used=()
  local -a members
  while read -r line; do
    read -r rack members_text <<< "$line"
    read -r -a members <<< "$members_text"
    if ((${#members[@]} < nodes_per_rack)); then
      unused+=("rack $rack: ${#members[@]} of $nodes_per_rack node(s), all unused (${members[*]})")
      continue
    fi
    used+=("${members[@]:0:nodes_per_rack}")
    if ((${#members[@]} > nodes_per_rack)); then
      unused+=("rack $rack: ${#members[@]} nodes, $nodes_per_rack used, left over: ${members[*]:nodes_per_rack}")
    fi
  done
  if ((${#unused[@]} > 0)); then
    what=$(printf '  %s\n' "${unused[@]}")
    if [[ $policy == fail ]]; then
      cb_fail "nodes that do not fill a rack of $nodes_per_rack:"$'\n'"$what"$'\n'"  allocate whole racks" \
        "(-N a multiple of $nodes_per_rack with --segment=$nodes_per_rack), set COLLBENCH_NODES_PER_RACK, or" \
        "COLLBENCH_PARTIAL_RACKS=drop to leave them out"
    fi
    echo "collbench slurm: warning: left out (COLLBENCH_PARTIAL_RACKS=drop):"$'\n'"$what" >&2
  fi
  ((${#used[@]} > 0)) || cb_fail "no rack has $nodes_per_rack nodes: nothing to run on"
  printf '%s\n' "${used[@]}"
}

# A SLURM_HOSTFILE (one line per task) with the allocation's nodes grouped by rack, racks in
# natural order, NODES_PER_RACK nodes from each, TASKS_PER_NODE lines per node: rack-major ranks.
make_hostfile() {
  local tasks_per_node=$1 nodes_per_rack=$2
  [[ $tasks_per_node =~ ^[1-9][0-9]*$ ]] || cb_fail "TASKS_PER_NODE '$tasks_per_node' is not a positive integer"
  local out=${COLLBENCH_RESULTS}/hostfile.${SLURM_JOB_ID:-local}
  mkdir -p "$COLLBENCH_RESULTS"
  local nodelist=${SLURM_JOB_NODELIST:-}
  [[ -n $nodelist ]] || cb_fail "not inside a Slurm allocation (SLURM_JOB_NODELIST is empty)"
  local grouped selected node t
  grouped=$(scontrol show hostnames "$nodelist" | racks_of_nodes)
  selected=$(select_nodes "$nodes_per_rack" <<< "$grouped")
  : > "$out.tmp"
  while read -r node; do
    for ((t = 0; t < tasks_per_node; t++)); do echo "$node" >> "$out.tmp"; done
  done <<< "$selected"
  mv "$out.tmp" "$out"
  echo "$out"
}

# The rack keys of a host file's nodes, comma-separated in natural order (COLLBENCH_RACK for accept's
# Prometheus labels).
racks_of_hostfile() {
  local node
  sort -u "$1" | while read -r node; do rack_of "$node"; done | sort -uV | paste -sd, -
}

# srun's --mpi plugin for an MPI library string (`collbench --version`'s "mpi" line).
mpi_flag_for() {
  case $1 in
    *"Open MPI"*) echo "--mpi=pmix" ;;
    *MPICH* | *MVAPICH* | *"Intel(R) MPI"* | *"Intel MPI"*) echo "--mpi=pmi2" ;;
    *) cb_fail "cannot tell srun's PMI plugin for the MPI library '$1'; set COLLBENCH_MPI_FLAG (e.g. --mpi=pmix)" ;;
  esac
}

# The --mpi flag for this job: COLLBENCH_MPI_FLAG, else from the build's MPI library; refused when
# this srun lacks the plugin (srun --mpi=list).
mpi_flag() {
  local flag=${COLLBENCH_MPI_FLAG:-}
  if [[ -z $flag ]]; then
    local library
    library=$("$COLLBENCH" --version | awk '$1 == "mpi" { $1 = ""; sub(/^ /, ""); print; exit }')
    flag=$(mpi_flag_for "$library")
  fi
  local plugin=${flag#--mpi=} plugins
  plugins=$(srun --mpi=list 2>&1 || true)
  if ! grep -Eqw -- "$plugin" <<< "$plugins"; then
    cb_fail "srun has no '$plugin' MPI plugin (srun --mpi=list: $(tr '\n' ' ' <<< "$plugins")); set COLLBENCH_MPI_FLAG"
  fi
  echo "$flag"
}

# Runs collbench on the first NTASKS lines of the host file, rack-major.
#   cb_srun NTASKS HOSTFILE collbench-args...
cb_srun() {
  local ntasks=$1 hostfile=$2
  shift 2
  local lines
  lines=$(wc -l < "$hostfile")
  ((ntasks >= 1 && ntasks <= lines)) || cb_fail "$ntasks task(s) asked, the host file $hostfile has $lines"
  local sub=${hostfile}.${ntasks} flag
  flag=$(mpi_flag)
  head -n "$ntasks" "$hostfile" > "$sub"
  SLURM_HOSTFILE=$sub srun --distribution=arbitrary -n "$ntasks" "$flag" --cpu-bind=none "$COLLBENCH" "$@"
}

# Problems with the NVLink fabric in `nvidia-smi -q` output (stdin), one line each; none when every
# GPU's Fabric section says State Completed and Status Success (the GPU joined the NVLink domain
# that the NVLink switches' fabric manager set up).
fabric_problems() {
  awk '
    /^GPU [0-9A-Fa-f:.]+$/ { gpu = $2; gpus++; in_fabric = 0; next }
    /^    Fabric[ \t]*$/ { in_fabric = 1; state[gpu] = "missing"; status[gpu] = "missing"; next }
    in_fabric && /^        State[ \t]*:/ { sub(/^[^:]*:[ \t]*/, ""); state[gpu] = $0; next }
    in_fabric && /^        Status[ \t]*:/ { sub(/^[^:]*:[ \t]*/, ""); status[gpu] = $0; next }
    /^    [^ ]/ { in_fabric = 0 }
    END {
      if (gpus == 0) { print "no GPU in nvidia-smi -q"; exit }
      for (g in state) seen[g] = 1
      n = 0
      for (g in seen) n++
      if (n < gpus) print gpus - n " GPU(s) without a Fabric section (driver without NVLink fabric support?)"
      for (g in state)
        if (state[g] != "Completed" || status[g] != "Success")
          print "GPU " g ": fabric state " state[g] ", status " status[g]
    }'
}

# This node: the IMEX daemon is running and ready, and every GPU joined the NVLink fabric.
node_fabric_check() {
  local node problems=()
  node=$(hostname)
  if command -v systemctl > /dev/null && ! systemctl is-active --quiet nvidia-imex; then
    problems+=("the nvidia-imex service is not active")
  fi
  if ! command -v nvidia-imex-ctl > /dev/null; then
    problems+=("nvidia-imex-ctl is not installed")
  elif [[ $(nvidia-imex-ctl -q 2>&1) != *READY* ]]; then
    problems+=("nvidia-imex-ctl -q does not report READY")
  fi
  local fabric
  fabric=$(nvidia-smi -q 2>&1 | fabric_problems)
  [[ -z $fabric ]] || problems+=("$fabric")
  if ((${#problems[@]} > 0)); then
    local problem
    for problem in "${problems[@]}"; do echo "collbench slurm: $node: $problem" >&2; done
    return 1
  fi
}

# Runs node_fabric_check on every node of the host file (GB200/GB300 templates) before any
# measurement: a node outside the NVLink domain would measure the wrong fabric. Exit 2 naming the
# nodes. COLLBENCH_FABRIC_CHECK=0 skips it.
require_nvlink_fabric() {
  local hostfile=$1
  [[ ${COLLBENCH_FABRIC_CHECK:-1} != 0 ]] || return 0
  local nodes
  nodes=$(sort -u "$hostfile" | paste -sd, -)
  if ! srun --nodelist="$nodes" --ntasks-per-node=1 -N "$(sort -u "$hostfile" | wc -l)" \
    bash "${BASH_SOURCE[0]}" node-fabric-check; then
    cb_fail "IMEX or NVLink fabric not ready on the node(s) above (docs/launching.md#gb200-gb300);" \
      "COLLBENCH_FABRIC_CHECK=0 skips this check"
  fi
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  case ${1:-} in
    hostfile) make_hostfile "${2:?tasks per node}" "${3:?nodes per rack}" ;;
    mpi-flag) mpi_flag ;;
    racks) racks_of_hostfile "${2:?host file}" ;;
    node-fabric-check) node_fabric_check ;;
    *)
      echo "usage: $0 hostfile TASKS_PER_NODE NODES_PER_RACK | mpi-flag | node-fabric-check" >&2
      exit 2
      ;;
  esac
fi
