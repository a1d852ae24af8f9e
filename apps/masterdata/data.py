"""The fixed master data of contract section 12 (cities come from the zipcodes package)."""

UNIT_TYPES = [
    ("Tractor", True),
    ("Truck", True),
    ("Box Truck", True),
    ("Pickup", True),
    ("Van", True),
    ("Trailer", False),
    ("Flatbed Trailer", False),
    ("Reefer Trailer", False),
    ("Tanker Trailer", False),
]

MAKES = [
    "Freightliner",
    "Kenworth",
    "Peterbilt",
    "Volvo",
    "International",
    "Mack",
    "Western Star",
    "Ford",
    "Chevrolet",
    "Ram",
    "Isuzu",
    "Hino",
    "Great Dane",
    "Wabash",
    "Utility",
    "Hyundai Translead",
    "GMC",
    "Navistar",
    "Stoughton",
    "Vanguard",
    "Fontaine",
    "Dorsey",
    "Kentucky",
    "Reitnouer",
    "Polar",
    "Heil",
    "Mitsubishi Fuso",
    "Autocar",
    "Sterling",
]

# code, full name, schedules units, schedules drivers
COVERAGE_TYPES = [
    ("AL", "Auto Liability", True, False),
    ("APD", "Auto Physical Damage", True, False),
    ("MTC", "Motor Truck Cargo", True, False),
    ("NTL", "Non-Trucking Liability", True, False),
    ("GL", "General Liability", False, False),
    ("WC", "Workers Compensation", False, False),
    ("UMB", "Umbrella", False, False),
    ("OA", "Owner Authorized", False, True),
    ("DD", "Driver Dispatch", False, True),
]

DRIVER_TYPES = ["Owner Operator", "Company Driver", "Lease Operator"]
LICENSE_TYPES = ["CDL Class A", "CDL Class B", "CDL Class C", "Non-CDL"]
CLIENT_TYPES = ["Motor Carrier", "Broker", "Owner Operator"]
