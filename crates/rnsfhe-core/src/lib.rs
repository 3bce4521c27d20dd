//! # rnsfhe-core (under construction): keys, RLWE encryption and key switching arrive with the CKKS issue.
