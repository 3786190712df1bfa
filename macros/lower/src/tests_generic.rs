//! Functions generic over their float type (see `generic`).
