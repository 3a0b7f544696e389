/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T122657Z/raw/profile-nginx.perf.data -p 15500,15501
