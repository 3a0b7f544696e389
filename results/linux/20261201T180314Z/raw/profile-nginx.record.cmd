/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261201T180314Z/raw/profile-nginx.perf.data -p 2884,2885
