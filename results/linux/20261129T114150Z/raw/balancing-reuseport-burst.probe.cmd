/work/main/bin/acceptlab-probe --target 127.0.0.1:39813 --shape burst --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261129T114150Z/raw/balancing-reuseport-burst.ready --json
