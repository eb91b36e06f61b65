"""Files given to a stack's inline functions beside their code (``cfnresponse``)."""
