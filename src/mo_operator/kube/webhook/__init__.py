"""The admission webhook server: AdmissionReview, JSON patches, bounded TLS
connections and where its certificate comes from (controller-runtime's
``pkg/webhook``)."""
