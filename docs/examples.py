"""The calls docs/api.md shows, in order; ids are those of a freshly seeded demo world."""

from __future__ import annotations

import datetime as dt


def EXAMPLES(Example, *, refresh: str):
    year = dt.date.today().year
    return [
        "Authentication",
        Example(
            "Get a token pair",
            "POST",
            "/v1/auth/token",
            {"username": "demo-admin", "password": "demo-password"},
            auth=False,
            display_body='\'{"username": "demo-admin", "password": "demo-password"}\'',
            note="Needs only the `apiKey`. Wrong credentials answer 401; repeated failures "
            "429 with `Retry-After`. Put the `access` value in `$TOKEN`.",
        ),
        Example(
            "Refresh the access token",
            "POST",
            "/v1/auth/token/refresh",
            {"refresh": refresh},
            auth=False,
            display_body='"{\\"refresh\\": \\"$REFRESH\\"}"',
        ),
        Example(
            "Who am I",
            "GET",
            "/v1/me",
            note="Your agencies (their `id` is the `agencyId` of writes) and permissions. Every "
            "counted answer carries `RateLimit-*` headers (Conventions, Rate limits).",
            show_headers=("RateLimit-Limit", "RateLimit-Policy"),
        ),
        Example(
            "A missing apiKey",
            "GET",
            "/v1/clients",
            api_key=False,
            show_headers=("WWW-Authenticate", "Content-Type"),
        ),
        Example(
            "A missing bearer token",
            "GET",
            "/v1/clients",
            auth=False,
            show_headers=("WWW-Authenticate",),
        ),
        Example("An unknown route", "GET", "/v1/nowhere", show_headers=("Content-Type",)),
        "Clients",
        Example(
            "List clients",
            "GET",
            "/v1/clients?limit=2&sort=-dot",
            keep=2,
            note="Filters: `name`, `dot`, `agencyId`, `producerId`, `parentClientId`, "
            "`deleted`, `clientTypeId`, `acordEnabled`.",
        ),
        Example(
            "Create a client",
            "POST",
            "/v1/clients",
            {
                "clientName": "Austin Movers LLC",
                "agencyId": 1,
                "dot": "5550001",
                "state": "TX",
                "city": "Austin",
                "clientType": "Motor Carrier",
                "producerId": 1,
                "parentClientId": 1,
            },
            show_headers=("Location",),
        ),
        Example("Get a client", "GET", "/v1/clients/1"),
        Example(
            "Update a client (partial)",
            "PUT",
            "/v1/clients/5",
            {"phone": "512-555-0100", "mailingState": "Texas", "mailingCity": "Round Rock"},
        ),
        Example(
            "Soft-delete a client",
            "PUT",
            "/v1/clients/5",
            {"deleted": True},
            note='`{"deleted": false}` restores it; deleted clients leave lists and '
            "verification unless `?deleted=true` asks for them.",
        ),
        Example(
            "A duplicate DOT",
            "POST",
            "/v1/clients",
            {"clientName": "Copy", "agencyId": 1, "dot": "1234567"},
        ),
        Example(
            "An agency you are not authorized for",
            "POST",
            "/v1/clients",
            {"clientName": "Elsewhere", "agencyId": 2},
        ),
        Example("Another agency's client", "GET", "/v1/clients/4"),
        Example(
            "Validation errors",
            "POST",
            "/v1/clients",
            {"agencyId": 1, "dot": "12a", "state": "Narnia"},
        ),
        "Policies",
        Example(
            "List policies",
            "GET",
            "/v1/policies?status=active&clientId=1&sort=policy",
            keep=2,
            note="Filters: `q`, `policy`, `clientId`, `deleted`, `status` "
            "(FUTURE, ACTIVE, EXPIRED, CANCELLED), `coverageType`.",
        ),
        Example(
            "Create a policy",
            "POST",
            "/v1/policies",
            {
                "clientId": 2,
                "policyNumber": f"NL-AL-{year}-3301",
                "fullCoverageTypeName": "Auto Liability",
                "insurerName": "Northland Insurance Company",
                "stateName": "Kansas",
                "producerName": "Demo Producer",
                "effectiveDate": f"{year}-03-01",
                "expirationDate": f"{year + 1}-03-01",
                "coveredAutos": "ANY",
                "limits": [{"name": "Combined Single Limit", "amount": "1000000"}],
            },
            show_headers=("Location",),
        ),
        Example("Get a policy", "GET", "/v1/policies/1"),
        Example(
            "Cancel a policy (partial update)",
            "PUT",
            "/v1/policies/9",
            {"cancellationDate": f"{year}-10-01"},
        ),
        Example(
            "Legacy search",
            "POST",
            "/v1/policies/search",
            {
                "pageIndex": 1,
                "pageSize": 2,
                "sortBy": "policy",
                "sortOrder": "desc",
                "filter": {"clientId": 1, "status": "ACTIVE"},
            },
            keep=2,
        ),
        Example(
            "Units scheduled on a policy",
            "GET",
            "/v1/policies/1/vehicles?status=4&limit=2",
            keep=2,
            note="Filters: `make`, `minValue`, `maxValue`, `status` (coverage status 1, 2 or 4).",
        ),
        "Vehicles",
        Example(
            "List vehicles",
            "GET",
            "/v1/vehicles?clientId=1&make=freightliner",
            keep=2,
            note="Filters: `vin` (17 characters, or a prefix), `unit`, `make`, `owner`, "
            "`garagingAddress`, `minValue`, `maxValue`, `status`, `clientId`, `policyId`.",
        ),
        Example(
            "Create a vehicle",
            "POST",
            "/v1/vehicles",
            {
                "clientId": 1,
                "unit": "104",
                "unitTypeName": "Tractor",
                "modelYear": 2024,
                "makeCompanyName": "Peterbilt",
                "serialNumber": "1XPBDP9X1FD654321",
                "licensePlate": "TX-4824D",
                "licensePlateStateName": "Texas",
                "statedValue": "189000",
                "lienholderId": 1,
            },
            show_headers=("Location",),
        ),
        Example("Get a vehicle (complete detail)", "GET", "/v1/vehicles/1"),
        Example(
            "Update a vehicle (partial)",
            "PUT",
            "/v1/vehicles/8",
            {"statedValue": "185000", "status": "ACTIVE"},
            keep=1,
        ),
        Example(
            "A bad VIN",
            "POST",
            "/v1/vehicles",
            {
                "clientId": 1,
                "unit": "9",
                "unitType": "Tractor",
                "modelYear": 2020,
                "makes": "Mack",
                "serialNumber": "1FUJGLDR7CLBP883O",
            },
        ),
        Example("A lienholder with its vehicles", "GET", "/v1/vehicles/lienholders/1"),
        "Drivers",
        Example("List drivers", "GET", "/v1/drivers?clientId=1&q=maria"),
        Example(
            "Create a driver",
            "POST",
            "/v1/drivers",
            {
                "clientId": 1,
                "firstName": "Luis",
                "lastName": "Ortega",
                "driverType": "Company Driver",
                "dateOfBirth": "07-04-1991",
                "hireDate": "01-15-2024",
                "licenseNumber": "TX44556677",
                "licenseState": "TX",
                "licenseExpirationDate": "07-04-2029",
                "dlType": "CDL Class A",
                "state": "Texas",
                "city": "Dallas",
            },
            show_headers=("Location",),
        ),
        Example("Get a driver", "GET", "/v1/drivers/1"),
        Example("Update a driver (partial)", "PUT", "/v1/drivers/4", {"phone": "214-555-0199"}),
        Example(
            "Legacy search",
            "POST",
            "/v1/drivers/search",
            {
                "pageIndex": 1,
                "pageSize": 10,
                "sortBy": "lastName",
                "sortOrder": "asc",
                "filter": {"clientId": 1},
            },
            keep=2,
        ),
        Example(
            "Associate an existing driver with a vehicle",
            "POST",
            "/v1/drivers/vehicles",
            {"vehicleId": 3, "driverId": 2},
        ),
        Example(
            "Create a driver and associate it (driverId 0)",
            "POST",
            "/v1/drivers/vehicles",
            {"vehicleId": 5, "driverId": 0, "firstName": "Sam", "lastName": "Reyes"},
        ),
        "Coverage assignments",
        Example(
            "Schedule a unit on a policy",
            "POST",
            "/v1/vehicles/coverages",
            {"vehicleId": 5, "policyId": 1, "policyAddedDate": f"{year}-06-01"},
            note="Active policy: `policyAddedDate` is required and inside the term. Future "
            "policy: the date is the policy's effective date (scheduled again: the end of the "
            "earlier period, if later; it must still be inside the term).",
        ),
        Example(
            "Schedule it again (already scheduled)",
            "POST",
            "/v1/vehicles/coverages",
            {"vehicleId": 5, "policyId": 1, "policyAddedDate": f"{year}-06-01"},
        ),
        Example(
            "Move its added date (status 4)",
            "PUT",
            "/v1/vehicles/coverages",
            {
                "vehicleId": 5,
                "policyId": 1,
                "coverageStatus": 4,
                "policyAddedDate": f"{year}-06-15",
            },
        ),
        Example(
            "Remove it (status 1)",
            "PUT",
            "/v1/vehicles/coverages",
            {"vehicleId": 5, "policyId": 1, "coverageStatus": 1},
            note="`policyRemovedDate` defaults to today (the policy's end if that has come) "
            "and may not be after the policy's end; 2 declines the same way.",
        ),
        Example(
            "Schedule a driver on an OA policy",
            "POST",
            "/v1/drivers/coverages",
            {"driverId": 2, "policyId": 5, "policyAddedDate": f"{year}-02-01"},
        ),
        Example(
            "Decline a driver (status 2)",
            "PUT",
            "/v1/drivers/coverages",
            {"driverId": 2, "policyId": 5, "coverageStatus": 2},
        ),
        "Verification",
        Example("Verify one DOT", "GET", "/v1/coverages/clients?dot=1234567"),
        Example(
            "Verify several DOTs",
            "GET",
            "/v1/coverages/clients?dots=1234567&dots=2345678&dots=9999999",
            keep=2,
            note="One entry per DOT, in request order; an uncovered DOT is `INACTIVE`, an "
            "unknown one `NOT_FOUND`.",
        ),
        Example(
            "Verify by client id, as of a past date",
            "GET",
            f"/v1/coverages/clients?id=2&asOf={year - 1}-06-30",
            keep=2,
        ),
        Example("An uncovered DOT", "GET", "/v1/coverages/clients?dot=2345678"),
        Example("An unknown DOT", "GET", "/v1/coverages/clients?dot=9999999"),
        Example("Both dot and id", "GET", "/v1/coverages/clients?dot=1234567&id=1"),
        Example("Verify a VIN", "GET", "/v1/coverages/vehicles?vin=1FUJGLDR7CLBP8834", keep=2),
        Example(
            "Verify a plate",
            "GET",
            "/v1/coverages/vehicles?licensePlate=tx%204821a&licensePlateState=TX",
            keep=1,
        ),
        Example("A removed unit", "GET", "/v1/coverages/vehicles?vin=1JJV532D8KL654321"),
        Example(
            "Fleet gap check",
            "POST",
            "/v1/coverages/vehicles/batch",
            {
                "vins": [
                    "1FUJGLDR7CLBP8834",
                    "1JJV532D8KL654321",
                    "3AKJHHDR5LSLA1234",
                    "4V4NC9EH5LN223344",
                ],
                "licensePlates": ["TX-4822B"],
            },
            keep=5,
        ),
        "Requirement profiles and compliance",
        Example(
            "List requirement profiles",
            "GET",
            "/v1/requirement-profiles",
            keep=3,
            note="Every agency has the built-in `federal-minimum` profile (49 CFR 387.9 by the "
            "client's `cargoClass`); the demo adds a shipper contract and a broker carrier "
            "packet. See docs/compliance.md for the rules and the reasons.",
        ),
        Example(
            "Create a requirement profile",
            "POST",
            "/v1/requirement-profiles",
            {
                "name": "Mega Shipper MSA",
                "rules": [
                    {
                        "kind": "coverage",
                        "coverageType": "AL",
                        "minimumLimit": "2000000.00",
                        "limitName": "Combined Single Limit",
                    },
                    {"kind": "coverage", "coverageType": "MTC", "minimumLimit": "250000.00"},
                    {"kind": "insurer_rating", "minimum": "A-"},
                    {"kind": "expiration_notice", "days": 45},
                    {"kind": "federal_minimum"},
                ],
            },
            note="`code` defaults to the name's slug; `agencyId` is needed only when you act "
            "for several agencies.",
        ),
        Example("Get a requirement profile", "GET", "/v1/requirement-profiles/5"),
        Example(
            "Rename a requirement profile",
            "PUT",
            "/v1/requirement-profiles/5",
            {"name": "Mega Shipper MSA 2026"},
            note="PUT is partial; new `rules` replace the old ones whole.",
        ),
        Example(
            "An invalid rule",
            "POST",
            "/v1/requirement-profiles",
            {
                "name": "Bad",
                "rules": [{"kind": "coverage", "coverageType": "AL", "minimumLimit": "-5"}],
            },
        ),
        Example(
            "The built-in profile cannot be changed",
            "PUT",
            "/v1/requirement-profiles/1",
            {"name": "Mine"},
        ),
        Example(
            "PASS: a DOT under the shipper contract",
            "GET",
            f"/v1/coverages/clients?dot=1234567&profile=shipper-contract&asOf={year}-06-30",
            keep=1,
            note="`profile` takes an id or a code; each result gains `compliance`.",
        ),
        Example(
            "CAUTION: the same DOT, its policies expiring within 30 days",
            "GET",
            f"/v1/coverages/clients?dot=1234567&profile=shipper-contract&asOf={year}-12-15",
            keep=1,
        ),
        Example(
            "FAIL: limits below the profile's minimums",
            "GET",
            f"/v1/coverages/clients?dot=1234567&profile=5&asOf={year}-06-30",
            keep=1,
        ),
        Example(
            "CAUTION: endorsements and insurer rating (broker packet)",
            "GET",
            f"/v1/coverages/clients?dot=1234567&profile=broker-contract&asOf={year}-06-30",
            keep=1,
        ),
        Example(
            "FAIL: several DOTs, coverage missing",
            "GET",
            "/v1/coverages/clients?dots=1234567&dots=2345678&dots=9999999"
            f"&profile=shipper-contract&asOf={year}-06-30",
            keep=3,
            note="A DOT that is not found has `compliance: null`.",
        ),
        Example(
            "Set a client's cargo class",
            "PUT",
            "/v1/clients/3",
            {"cargoClass": "HAZMAT"},
            keep=2,
            note="`GENERAL_FREIGHT` (default), `OIL`, `HAZMAT` or `HAZMAT_BULK`: the federal "
            "minimum of auto liability is 750,000.00, 1,000,000.00, 1,000,000.00 or "
            "5,000,000.00.",
        ),
        Example(
            "FAIL: below the federal minimum for a hazmat carrier",
            "GET",
            f"/v1/coverages/clients?dot=3456789&profile=federal-minimum&asOf={year + 1}-02-01",
            keep=1,
        ),
        Example(
            "FAIL: a unit not scheduled on the auto liability",
            "GET",
            "/v1/coverages/vehicles?vin=1JJV532D8KL654321&profile=federal-minimum",
            keep=1,
            note="Unit T-202 was removed from the auto liability policy yesterday; the client "
            "still has it in force.",
        ),
        Example(
            "Fleet gap check under a profile",
            "POST",
            "/v1/coverages/vehicles/batch",
            {
                "vins": ["1FUJGLDR7CLBP8834", "1JJV532D8KL654321", "4V4NC9EH5LN223344"],
                "profile": "federal-minimum",
            },
            keep=3,
            note="The summary counts the found units per result.",
        ),
        Example(
            "An unknown profile",
            "GET",
            "/v1/coverages/clients?dot=1234567&profile=no-such-profile",
        ),
        Example("Delete a requirement profile", "DELETE", "/v1/requirement-profiles/5"),
        "Certificates",
        Example(
            "Client certificate (JSON)",
            "GET",
            "/v1/certificates/clients?dot=1234567&holderName=Acme%20Shipper%20Inc"
            "&holderAddress=1%20Main%20St%2C%20Austin%2C%20TX%2078701",
            keep=6,
            note="`id` instead of `dot` works too; `asOf` certifies another date.",
        ),
        Example(
            "Client certificate (PDF)",
            "GET",
            "/v1/certificates/clients?id=1&format=pdf",
            binary=True,
            show_headers=("Content-Type", "Content-Disposition"),
            note="`Accept: application/pdf` works too. A rendered example is "
            "[docs/certificate-example.png](certificate-example.png).",
        ),
        Example(
            "Vehicle certificate",
            "GET",
            "/v1/certificates/vehicles?vin=1FUJGLDR7CLBP8834",
            keep=4,
            note="Exactly one of `id`, `vin`, `licensePlate`; `clientId` narrows, and so does "
            "`licensePlateState` (name or USPS code) a `licensePlate`, as verification reads it. "
            "Only the coverages the unit is scheduled on.",
        ),
        Example("Nothing in force", "GET", "/v1/certificates/clients?dot=2345678"),
        "Documents",
        Example(
            "Upload a client document",
            "POST",
            "/v1/documents/clients",
            multipart={
                "file": ("loss-runs.pdf", b"%PDF-1.4\n% demo loss runs\n", "application/pdf"),
                "clientId": "1",
                "description": "Loss runs",
            },
            headers={"Idempotency-Key": "upload-loss-runs-1"},
            show_headers=("Location",),
            note="The file is streamed (25 MiB at most, 413 beyond); its type is sniffed "
            "from the bytes and its SHA-256 stored.",
        ),
        Example(
            "Repeat it with the same Idempotency-Key",
            "POST",
            "/v1/documents/clients",
            multipart={
                "file": ("loss-runs.pdf", b"%PDF-1.4\n% demo loss runs\n", "application/pdf"),
                "clientId": "1",
                "description": "Loss runs",
            },
            headers={"Idempotency-Key": "upload-loss-runs-1"},
            show_headers=("Idempotent-Replayed",),
        ),
        Example(
            "Upload a policy document",
            "POST",
            "/v1/documents/policies",
            multipart={
                "file": ("endorsement.txt", b"Additional insured endorsement\n", "text/plain"),
                "policyId": "1",
            },
        ),
        Example(
            "List a client's documents",
            "GET",
            "/v1/documents/clients?clientId=1",
            keep=2,
            note="Or `?dot=1234567`.",
        ),
        Example("List a policy's documents", "GET", "/v1/documents/policies?policyId=1"),
        Example(
            "Get a download link",
            "GET",
            "/v1/documents/3/client/download",
            note="The link needs no credentials until `expiresAtUtc` (then 403).",
        ),
        Example(
            "Replace a document's file",
            "PUT",
            "/v1/documents/3/client",
            multipart={"file": ("loss-runs-v2.pdf", b"%PDF-1.4\n% corrected\n", "application/pdf")},
            note="The id stays; the earlier file is kept as a previous version.",
        ),
        Example("Delete a document", "DELETE", "/v1/documents/3/client"),
        Example("Delete it again", "DELETE", "/v1/documents/3/client"),
        Example(
            "A policy document addressed as a client one", "GET", "/v1/documents/2/client/download"
        ),
        "Premium reports and lienholders",
        Example(
            "Raw data of a premium report",
            "GET",
            "/v1/reports/1/raw-data",
            keep=6,
            note="The demo report is this month's for Lone Star's auto liability policy, rated "
            "6,000 a year per tractor and 800 per trailer. Each row is annual x days / 365 "
            "(366 when the policy year holds February 29th), rounded half-up to the cent; the "
            "totals are the sums of the rows. Policy years run from an anniversary of the "
            "effective date to the next (a February 29th's is March 1st in other years): "
            "`policyYearDays` is that of the year the period starts in, and a period across "
            "an anniversary divides the days after it by the next year's days. The rows are "
            "the live units of a live client, as the vehicle detail's `billing`: a deleted "
            "unit, or a unit of a deleted client, has no row (restored, it has one again). "
            "Create one "
            "with `python manage.py create_premium_report POLICY_ID [--period YYYY-MM] "
            '[--snapshot]`; a snapshot answers `"source": "snapshot"` and no longer moves (a '
            "frozen report is never frozen again: the admin's freeze action refuses it). A "
            "snapshot's `producer` and `agency` are those of the agency it was frozen under: "
            "after its client moves to another agency (which leaves the old agency's producer "
            "behind), they read `null` to a caller who does not act for that agency (a superuser "
            "acts for every one); the rest of the snapshot is as frozen.",
        ),
        "Change events and webhooks",
        Example(
            "The change feed",
            "GET",
            "/v1/events?limit=3",
            keep=3,
            note="Oldest first; pass `next` as `after` to continue (it never skips an event "
            "committed late and never repeats one). Filters: `type` (repeatable), `clientId`. "
            "See docs/webhooks.md for every type.",
        ),
        Example(
            "Only policy events of one client",
            "GET",
            "/v1/events?type=policy.created&type=policy.updated&type=policy.cancelled&clientId=1",
            keep=2,
        ),
        Example("A cursor this feed never gave out", "GET", "/v1/events?after=bogus"),
        Example(
            "Subscribe a webhook",
            "POST",
            "/v1/webhooks",
            {
                "url": "https://93.184.216.34/hooks/coverage",
                "eventTypes": ["carrier.status_changed", "vehicle.status_changed"],
                "description": "Dispatch board",
            },
            show_headers=("Location",),
            note="`secret` appears here and in rotate-secret only: keep it. `[]` (the default) "
            "means every type or every client; `agencyId` is needed only when you act for "
            "several agencies.",
        ),
        Example(
            "A private address is refused",
            "POST",
            "/v1/webhooks",
            {"url": "http://169.254.169.254/latest/meta-data"},
            note="A cloud's metadata address (this link-local one, and others), multicast, "
            "unspecified and reserved addresses are refused always. Private and loopback "
            "addresses are refused too, "
            "unless WEBHOOK_ALLOW_PRIVATE_TARGETS is on (by default with DJANGO_DEBUG, and "
            "under `make run`, which delivers to receivers on your machine).",
        ),
        Example("List webhooks", "GET", "/v1/webhooks"),
        Example("Get a webhook", "GET", "/v1/webhooks/1"),
        Example(
            "Change a webhook",
            "PUT",
            "/v1/webhooks/1",
            {"eventTypes": [], "clientIds": [1]},
            note="PUT is partial. `active: true` reactivates one a 410 switched off.",
        ),
        Example(
            "Rotate the secret",
            "POST",
            "/v1/webhooks/1/rotate-secret",
            note="The previous secret keeps signing beside the new one for 24 hours.",
        ),
        Example(
            "Ping",
            "POST",
            "/v1/webhooks/1/ping",
            note="Queues a `webhook.ping` event for this subscription only (202).",
        ),
        Example("The delivery log", "GET", "/v1/webhooks/1/deliveries", keep=3),
        Example(
            "Redeliver",
            "POST",
            "/v1/webhooks/1/deliveries/1/redeliver",
            note="Sends the same event again (same `webhook-id`; receivers deduplicate on it).",
        ),
        Example("Delete a webhook", "DELETE", "/v1/webhooks/1"),
    ]
