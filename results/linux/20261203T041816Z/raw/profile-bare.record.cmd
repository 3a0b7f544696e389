/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T041816Z/raw/profile-bare.perf.data -p 32232,32233
