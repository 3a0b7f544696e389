/work/main/bin/acceptlab-probe --target 127.0.0.1:32947 --shape burst --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261129T082819Z/raw/balancing-reuseport-burst.ready --json
