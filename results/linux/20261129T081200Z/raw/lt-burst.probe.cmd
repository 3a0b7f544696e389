/work/main/bin/acceptlab-probe --target 127.0.0.1:35673 --shape burst --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261129T081200Z/raw/lt-burst.ready --json
