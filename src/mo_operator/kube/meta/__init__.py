"""Object meta: read-only JSON values, accessors, conditions, times, label
selectors, quantities and the API errors; what every other package reads
objects with (apimachinery's ``pkg/apis/meta``, ``pkg/api/errors``, ``labels``
and ``api/resource``)."""
