/work/main/bin/acceptlab-probe --target 127.0.0.1:45169 --shape burst --connections 32 --rounds 1 --path /pid --workers-from /work/main/results/linux/20261205T060510Z/raw/diagnosis-lt-w2.ready --json
