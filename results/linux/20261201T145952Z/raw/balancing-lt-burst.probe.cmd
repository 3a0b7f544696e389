/work/main/bin/acceptlab-probe --target 127.0.0.1:39093 --shape burst --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261201T145952Z/raw/balancing-lt-burst.ready --json
