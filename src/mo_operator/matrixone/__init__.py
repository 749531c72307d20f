"""What we know of MatrixOne, free of Kubernetes I/O: names, ports, labels,
config rendering, the admin client interface and the simulated MatrixOne."""
