/work/main/bin/acceptlab-probe --target 127.0.0.1:41355 --shape burst --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261201T112649Z/raw/balancing-lt-threads-burst.ready --json
