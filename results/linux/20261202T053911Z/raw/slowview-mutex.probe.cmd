/work/main/bin/acceptlab-probe --target 127.0.0.1:43685 --shape burst --connections 16 --rounds 3 --workers-from /work/main/results/linux/20261202T053911Z/raw/slowview-mutex.ready --json
