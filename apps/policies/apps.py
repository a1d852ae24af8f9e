from django.apps import AppConfig


class PoliciesConfig(AppConfig):
    name = "apps.policies"
    label = "policies"
    verbose_name = "Policies"

    def ready(self):
        # Events show a policy as the API does (apps.events.records).
        from apps.events.records import record_serializer_register
        from apps.policies.api.serializers import PolicySerializer

        record_serializer_register("policy", PolicySerializer)
