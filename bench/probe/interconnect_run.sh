#!/usr/bin/env bash
# The real-GPU run of the probe's interconnect section and its start-up (read-only on the GPU).
# Usage, on the GPU machine from the repo root, with wheels in WHEELS (gpunode's runtime
# dependencies for this Python, and gpunode itself in WHEELS/new and, for a before/after,
# WHEELS/old):
#   bash bench/probe/interconnect_run.sh OUT_DIR WHEELS
# Writes the node's own outputs (nvidia-smi -q / -q -x / nvlink -s / nvlink -e / topo -m,
# ibstat and ibv_devinfo where installed, sysfs reads), the probe's JSON and table, the
# agent's report after a 90 s soak, and the start-up timings of both versions.
set -u
OUT=${1:?output directory}
WHEELS=${2:?wheel directory}
mkdir -p "$OUT"
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) NODE=h200-device ;;
  *H100*) NODE=h100-device ;;
  *) NODE=gpu-device ;;
esac
echo "$NODE" > "$OUT/node-name.txt"

for v in old new; do
  [ -d "$WHEELS/$v" ] || continue
  python3 -m venv "/tmp/venv-$v" && "/tmp/venv-$v/bin/pip" install -q --no-index \
    --find-links "$WHEELS" --find-links "$WHEELS/$v" gpunode; echo "install $v rc=$?"
done
G=/tmp/venv-new/bin/gpunode

{
  uname -a; python3 --version; nproc
  /tmp/venv-new/bin/python -c 'import importlib.metadata as m; print("nvidia-ml-py", m.version("nvidia-ml-py"))'
  cat /proc/driver/nvidia/version
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv
  echo "--- /sys/class/infiniband"; ls -l /sys/class/infiniband 2>&1
  echo "--- /sys/class/net"; ls /sys/class/net
  echo "--- sriov"; grep -H . /sys/class/net/*/device/sriov_numvfs /sys/class/net/*/device/sriov_totalvfs 2>&1
  echo "--- modules"; grep -E '^(nvidia|mlx|ib_|rdma)' /proc/modules
  echo "--- devices"; ls /dev/nvidia* 2>&1
  echo "--- services"; for s in nvidia-fabricmanager nvidia-imex nvlsm; do systemctl is-active "$s" 2>&1; done
} > "$OUT/env.txt" 2>&1

nvidia-smi -q > "$OUT/nvidia-smi-q.txt"; echo "nvidia-smi -q rc=$?"
nvidia-smi -q -x > "$OUT/nvidia-smi-q.xml"; echo "nvidia-smi -q -x rc=$?"
nvidia-smi nvlink -s > "$OUT/nvidia-smi-nvlink-s.txt" 2>&1; echo "nvlink -s rc=$?"
nvidia-smi nvlink -e > "$OUT/nvidia-smi-nvlink-e.txt" 2>&1; echo "nvlink -e rc=$?"
nvidia-smi topo -m > "$OUT/nvidia-smi-topo-m.txt" 2>&1; echo "topo -m rc=$?"
{ command -v ibstat && ibstat; command -v ibv_devinfo && ibv_devinfo; } > "$OUT/ib.txt" 2>&1
echo "ibstat/ibv_devinfo rc=$?"

"$G" probe -o json --node-name "$NODE" > "$OUT/probe.json"; echo "probe -o json rc=$?"
"$G" probe --node-name "$NODE" > "$OUT/probe.txt"; echo "probe (table) rc=$?"

# Start-up: whole commands, both versions, fresh processes; then imports of the new one.
CMDS=('nvidia-smi -q' 'python3 -c pass' "$G probe -o json --node-name $NODE" "$G --help")
[ -x /tmp/venv-old/bin/gpunode ] && CMDS+=("/tmp/venv-old/bin/gpunode probe -o json --node-name $NODE")
python3 bench/startup/wall.py --runs 15 -- "${CMDS[@]}" > "$OUT/startup-wall.txt" 2>&1
echo "wall rc=$?"
for v in old new; do
  [ -x "/tmp/venv-$v/bin/python" ] || continue
  "/tmp/venv-$v/bin/python" bench/startup/importtime.py --runs 15 -- probe -o json \
    > "$OUT/startup-imports-$v.txt" 2>&1; echo "importtime $v rc=$?"
done

# The agent as deployed (default interval), 90 s, no API server here: no node report.
/tmp/venv-new/bin/python bench/agent/soak.py --seconds 90 --out "$OUT/agent-soak.json" -- \
  "$G" agent --no-node-report --node-name "$NODE" --port 9808 > "$OUT/agent-soak.txt" 2>&1
echo "agent soak rc=$?"
