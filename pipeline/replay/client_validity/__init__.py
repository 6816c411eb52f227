"""The client's own floor and ceiling: calibration against a zero-delay echo, the roofline."""
