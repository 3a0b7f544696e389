/work/main/bin/acceptlab-probe --target 127.0.0.1:36639 --shape burst --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261129T095403Z/raw/balancing-mutex-burst.ready --json
