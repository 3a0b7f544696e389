/work/main/bin/acceptlab-probe --target 127.0.0.1:42997 --shape burst --connections 16 --rounds 3 --workers-from /work/main/results/linux/20261203T170929Z/raw/slowview-mutex-strict.ready --json
