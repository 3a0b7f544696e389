/work/main/bin/acceptlab-probe --target 127.0.0.1:38073 --shape burst --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261129T112216Z/raw/balancing-fdpass-off-burst.ready --json
