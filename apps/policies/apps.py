from apps.events import records


class PoliciesConfig(records.RecordsAppConfig):
    name = "apps.policies"
    label = "policies"
    verbose_name = "Policies"
    # Events show a policy as the API does.
    record_serializers = {"policy": "apps.policies.api.serializers.PolicySerializer"}
    # The rows of other lists its record shows by name: a change of them announces
    # `policy.updated` for each live policy naming the row (docs/webhooks.md).
    shows = {
        "policy": (
            "apps.policies.selectors.live_policies_naming",
            {
                "masterdata.Insurer": (("name", "naic"), ("insurer",)),
                "masterdata.CoverageType": (("name", "code"), ("coverage_type",)),
                "masterdata.State": (("name", "code"), ("state",)),
                "agencies.Producer": (("name",), ("producer",)),
            },
        )
    }
