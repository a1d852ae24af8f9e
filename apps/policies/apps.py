from apps.events import records


class PoliciesConfig(records.RecordsAppConfig):
    name = "apps.policies"
    label = "policies"
    verbose_name = "Policies"
    # Events show a policy as the API does.
    record_serializers = {"policy": "apps.policies.api.serializers.PolicySerializer"}
