/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261205T024423Z/raw/profile-bare.perf.data -p 32210,32211
