"""The embedded server's etcd and watch cache: versioned object storage
(``store``) and the watch streams served from its history (``watch``)."""
