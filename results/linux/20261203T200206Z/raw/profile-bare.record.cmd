/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T200206Z/raw/profile-bare.perf.data -p 18263,18264
