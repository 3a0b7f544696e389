/work/main/bin/acceptlab-probe --target 127.0.0.1:35997 --shape burst --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261129T140236Z/raw/balancing-handoff-off-burst.ready --json
