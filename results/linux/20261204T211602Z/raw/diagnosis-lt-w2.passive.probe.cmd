/work/main/bin/acceptlab-probe --target 127.0.0.1:40307 --shape burst --connections 32 --rounds 1 --path /pid --workers-from /work/main/results/linux/20261204T211602Z/raw/diagnosis-lt-w2.ready --json
