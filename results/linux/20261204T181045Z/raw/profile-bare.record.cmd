/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T181045Z/raw/profile-bare.perf.data -p 9438,9439
