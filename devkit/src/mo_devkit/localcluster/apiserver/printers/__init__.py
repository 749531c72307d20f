"""kubectl's server-side printing of built-in kinds: the columns and row
functions of kube-apiserver's printers, one module per group of kinds."""
