#!/usr/bin/env bash
# Everything the H200 run needs, in one go (read-only on the GPU).
# Usage (repo root, on the GPU machine, PYTHONPATH holding src and msgspec):
#   bash bench/probe/device_run.sh OUT_DIR
set -u
OUT=${1:?output directory}
{
  uname -a; python3 --version
  python3 -c 'import msgspec, pynvml, importlib.metadata as m; print("msgspec", msgspec.__version__, "nvidia-ml-py", m.version("nvidia-ml-py"))'
  cat /proc/driver/nvidia/version; nproc; ls -l /dev/kmsg
} > "$OUT/env.txt" 2>&1
nvidia-smi -q -x > "$OUT/nvidia-smi-q.xml"; echo "nvidia-smi -q -x rc=$?"
nvidia-smi -q > "$OUT/nvidia-smi-q.txt"; echo "nvidia-smi -q rc=$?"
python3 -X faulthandler -m gpunode.probe --node-name h200-device > "$OUT/probe.json"; echo "probe rc=$?"
python3 -m gpunode.probe --node-name h200-device --nvidia-smi --bundle /tmp/probe-bundle > /dev/null
echo "probe --bundle rc=$?"
tar -C /tmp -czf "$OUT/probe-bundle.tar.gz" probe-bundle
python3 bench/probe/bench_probe.py --runs 25 --out "$OUT/bench.json"; echo "bench rc=$?"
