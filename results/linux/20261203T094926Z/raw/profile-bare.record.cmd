/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T094926Z/raw/profile-bare.perf.data -p 1013,1014
