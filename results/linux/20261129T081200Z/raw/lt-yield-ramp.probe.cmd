/work/main/bin/acceptlab-probe --target 127.0.0.1:44635 --shape ramp --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261129T081200Z/raw/lt-yield-ramp.ready --json --gap-ms 10
