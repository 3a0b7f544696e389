/work/main/bin/acceptlab-probe --target 127.0.0.1:43603 --shape burst --connections 64 --rounds 1 --path /pid --workers-from /work/main/results/linux/20261202T003039Z/raw/diagnosis-lt-w4.ready --json
