/work/main/bin/acceptlab-probe --target 127.0.0.1:43763 --shape burst --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261201T052945Z/raw/balancing-reuseport-burst.ready --json
