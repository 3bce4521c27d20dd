//! # rnsfhe-ckks (under construction): the RNS-CKKS scheme arrives with the CKKS issue.
