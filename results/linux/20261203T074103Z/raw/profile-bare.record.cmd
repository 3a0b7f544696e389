/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T074103Z/raw/profile-bare.perf.data -p 21127,21128
