"""The dashboard's pages of spaces and people: `/spaces` and `/people`.

`/spaces` shows each space the signed-in person is in: their role, its apps, whether its
apps run code, and its members. Its owners add people to it, change their roles and take
them out; anyone makes a new space; the server's owner lets a space's apps run code, or
stops them. `/people` is the server's owner's: everyone on the server, adding a person
(with a password, or none and a one-time sign-in link), removing one after a second
click, and a sign-in link for anyone.

Every write is the signed-in person's call on the Service, whose rights checks decide, as
`pasture member add`, `pasture space trust` and `pasture user new` are; a refusal is shown
in the page as its sentence and nothing is written. The POSTs come with the session
cookie, so they are held to the origin check of every dashboard form
(`Who.check_cookie_post`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from pasture.caller import Caller
from pasture.errors import PastureError, UsageError
from pasture.platform import ROLES, Role
from pasture.result import Result
from pasture.web import own_pages
from pasture.web._failures import own_page, refused_page
from pasture.web.endpoints import Endpoints

_SPACE_FORMS = "this form adds, changes or takes out a member, makes a space or trusts one"
_PEOPLE_FORMS = "this form adds or removes a person, or makes a sign-in link"


def _fields(body: bytes) -> Mapping[str, list[str]]:
    return parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)


def _one(fields: Mapping[str, list[str]], name: str) -> str:
    return fields.get(name, [""])[0].strip()


class PeopleEndpoints(Endpoints):
    """`GET /spaces`, `GET /people` and their forms' POSTs."""

    # -- spaces --------------------------------------------------------------------------
    async def spaces(self, request: Request) -> Response:
        caller = await self.who.of_page(request)
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        return own_page(await self.spaces_page(caller))

    async def change_spaces(self, request: Request) -> Response:
        """`do=add|role` (space, user, role), `do=remove` (space, user), `do=new` (space),
        `do=trust|untrust` (space)."""
        fields = _fields(await request.body())
        caller = await self.who.of_page(request)  # a POST from another site is refused here
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        do, space, user = _one(fields, "do"), _one(fields, "space"), _one(fields, "user")
        try:
            done = await self._space_change(caller, do, space, user, _one(fields, "role"))
        except PastureError as e:  # said in the page, above what it is about
            return refused_page(await self.spaces_page(caller, problem=e.sentence), e)
        return own_page(await self.spaces_page(caller, done=done.text))

    async def _space_change(
        self, caller: Caller, do: str, space: str, user: str, role: str
    ) -> Result:
        service = self.service
        if do in ("add", "role"):
            # the Service refuses any but the three, as at every door
            return await self.call(service.add_member, caller, space, user, cast(Role, role))
        if do == "remove":
            return await self.call(service.remove_member, caller, space, user)
        if do == "new":
            return await self.call(service.spaces.new_space, caller, space)
        if do in ("trust", "untrust"):
            return await self.call(service.trust_space, caller, space, do == "trust")
        raise UsageError(_SPACE_FORMS)

    async def spaces_page(
        self, caller: Caller, *, done: str | None = None, problem: str | None = None
    ) -> str:
        listed = await self.call(self.service.spaces.listing, caller)
        spaces: list[dict[str, Any]] = []
        for found in listed.data["spaces"]:
            members = await self.call(self.service.spaces.members, caller, str(found["space"]))
            spaces.append({**found, "members": members.data["members"]})
        admin = await self.call(self.service.people.is_owner, caller)
        return own_pages._render(
            "spaces.html",
            "Spaces · pasture",
            caller,
            "/spaces",
            spaces=spaces,
            roles=list(ROLES),
            admin=admin,
            done=done,
            problem=problem,
        )

    # -- people --------------------------------------------------------------------------
    async def people(self, request: Request) -> Response:
        caller = await self.who.of_page(request)
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        try:
            return own_page(await self.people_page(caller))
        except PastureError as e:  # anyone but the server's owner: who can, in the page
            return refused_page(await self.people_page(caller, problem=e.sentence, quiet=True), e)

    async def change_people(self, request: Request) -> Response:
        """`do=add` (name, password), `do=remove` (name; asks again) and `do=remove&sure=yes`,
        `do=link` (name): a one-time sign-in link, shown once."""
        fields = _fields(await request.body())
        caller = await self.who.of_page(request)  # a POST from another site is refused here
        if not caller.signed_in:
            return RedirectResponse("/signin", status_code=303)
        do, name = _one(fields, "do"), _one(fields, "name")
        service = self.service
        try:
            if do == "add":
                password = fields.get("password", [""])[0] or None
                made = await self.call(service.people.new_user, caller, name, password)
                how = (
                    "they sign in with their password"
                    if password
                    else "give them a sign-in link to sign in the first time"
                )
                said = f"{made.name} is added, with a space of their own; {how}"
                return own_page(await self.people_page(caller, done=said))
            if do == "remove" and _one(fields, "sure") != "yes":
                await self.call(service.people.require_admin, caller, "removes people")
                return own_page(await self.people_page(caller, asking=name))
            if do == "remove":
                done = await self.call(service.remove_user, caller, name)
                return own_page(await self.people_page(caller, done=done.text))
            if do == "link":
                code = await self.call(service.sign_in_link, caller, name)
                url = f"{service.origins.base_url.rstrip('/')}/signin?link={code}"
                link = {"name": name, "url": url}
                return own_page(await self.people_page(caller, link=link))
            raise UsageError(_PEOPLE_FORMS)
        except PastureError as e:
            page = await self.people_page(caller, problem=e.sentence, quiet=True)
            return refused_page(page, e)

    async def people_page(
        self,
        caller: Caller,
        *,
        done: str | None = None,
        problem: str | None = None,
        asking: str | None = None,
        link: Mapping[str, str] | None = None,
        quiet: bool = False,
    ) -> str:
        """The page; `quiet`: a refusal is being shown, so a second one (the listing's own,
        for anyone but the server's owner) leaves the people out rather than raising."""
        people: list[Mapping[str, Any]] | None = None
        try:
            people = (await self.call(self.service.people.listing, caller)).data["users"]
        except PastureError:
            if not quiet:
                raise
        return own_pages._render(
            "people.html",
            "People · pasture",
            caller,
            "/people",
            people=people,
            done=done,
            problem=problem,
            asking=asking,
            link=link,
        )


__all__ = ["PeopleEndpoints"]
