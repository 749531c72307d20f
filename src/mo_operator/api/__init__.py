"""Typed models of the MatrixOne kinds (group core.matrixorigin.io, version
v1alpha1) and the CRDs generated from them."""
