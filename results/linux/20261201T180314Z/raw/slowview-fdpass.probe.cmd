/work/main/bin/acceptlab-probe --target 127.0.0.1:36715 --shape burst --connections 16 --rounds 3 --workers-from /work/main/results/linux/20261201T180314Z/raw/slowview-fdpass.ready --json
