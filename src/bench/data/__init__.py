"""Data loading: a source's rows selected and streamed (spec 1.1), rows turned into cases (spec 1.2),
and the manifests of downloaded rows."""
