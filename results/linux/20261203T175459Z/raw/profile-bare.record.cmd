/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T175459Z/raw/profile-bare.perf.data -p 22130,22131
