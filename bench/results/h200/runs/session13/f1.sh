#!/bin/bash
# Session 13, call 1: issue 19's link probe (link_probe.cu, 256 MiB and 1 GiB a direction),
# then session12/e4.sh (the skinny live-stage patch with its baseline on the same machine).
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt
P=bench/results/h200/runs/session13
nvcc -O3 -arch=sm_90 -std=c++17 $P/link_probe.cu -o /tmp/link_probe && { timeout 40 /tmp/link_probe 256; timeout 60 /tmp/link_probe 1024; } > $O/f1-link-probe.txt 2>&1
cat $O/f1-link-probe.txt
bash bench/results/h200/runs/session12/e4.sh $O
