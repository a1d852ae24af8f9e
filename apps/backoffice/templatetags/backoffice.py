"""Template tags of the back-office change pages: the summaries of apps.backoffice.summaries."""

from django import template

from apps.backoffice import summaries
from apps.core.dates import today

register = template.Library()


@register.simple_tag(takes_context=True)
def vehicle_summary(context, vehicle):
    return summaries.vehicle_summary(user=context["request"].user, vehicle=vehicle, on=today())


@register.simple_tag(takes_context=True)
def driver_summary(context, driver):
    return summaries.driver_summary(user=context["request"].user, driver=driver, on=today())


@register.simple_tag(takes_context=True)
def client_summary(context, client):
    return summaries.client_summary(user=context["request"].user, client=client, on=today())
