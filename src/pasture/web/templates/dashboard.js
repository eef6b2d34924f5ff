// Runs each form through the app's own ./api/command and shows the answer.
for (const form of document.querySelectorAll("form.run")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const args = {};
    for (const input of form.querySelectorAll("input[data-arg]")) {
      const name = input.dataset.arg;
      if (input.type === "checkbox") { args[name] = input.checked; continue; }
      if (input.value === "") continue;
      args[name] = input.type === "number" ? Number(input.value) : input.value;
    }
    const out = form.querySelector(".answer");
    const line = document.createElement("p");
    const data = document.createElement("pre");
    out.replaceChildren(line);
    line.textContent = "running…";
    try {
      const response = await fetch(form.dataset.api, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ name: form.dataset.command, args }),
      });
      const body = await response.json();
      if (!response.ok) {
        line.className = "refused";
        line.textContent = body.error;
        return;
      }
      line.className = "";
      line.textContent = body.text;
      data.textContent = JSON.stringify(body.data, null, 2);
      out.append(data);
    } catch (error) {
      line.className = "refused";
      line.textContent = "the server could not be reached — check that pasture is running";
    }
  });
}
