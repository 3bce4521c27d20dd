//! # rnsfhe-bfv (under construction): RNS-BFV in the Halevi-Polyakov-Shoup form.
